"""A test bundle's server on the official MCP Python SDK: the time, and the zone it was given."""

import datetime
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("py-clock", version="0.4.1", log_level="WARNING")


@server.tool(description="The current time in UTC, RFC 3339.")
def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


@server.tool(description="The zone this server was configured with.")
def zone() -> str:
    return os.environ.get("CLOCK_ZONE", "")


if __name__ == "__main__":
    server.run("stdio")
