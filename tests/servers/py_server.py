"""A real MCP server built on the official MCP Python SDK (mcp 2.x), for tests.

Run with the venv made by scripts/setup.sh:

    .deps/py/bin/python tests/servers/py_server.py [stdio|streamable-http|sse] [--port N]

stdio is the default; the HTTP transports bind 127.0.0.1 (streamable HTTP at
/mcp, SSE at /sse with messages posted to /messages/).

Tools: echo, add, weather, image, slow_count, boom, notify_and_ask, ask_client
(elicitation and sampling, with tools, from the server), resolve_ask and
resolve_twice (resolvers: the same questions in both protocol eras, as
server-to-client requests or as input_required rounds), plan (a schema with $ref), grow and touch (a tool
list change and a resource update, sent on subscriptions/listen streams).
Resources: h9://readme (text), h9://pixel.png (binary), the template
h9://notes/{name}. Prompt: review (code required, focus optional, focus completes).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
import warnings
import zlib
from typing import Annotated, Literal

import anyio
from pydantic import BaseModel

from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, Image, ListRoots, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError

# ctx.info / sampling are marked deprecated for the 2026-07-28 protocol; they
# still work on the handshake versions, which is what these tests exercise.
warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*deprecated as of 2026-07-28.*")

# H9_PY_CACHE_TTL_MS: list results say they stay fresh this long (2026-07-28 caching hints).
_ttl = int(os.environ.get("H9_PY_CACHE_TTL_MS", "0"))
_hints = {m: CacheHint(ttl_ms=_ttl) for m in ("tools/list", "prompts/list")} if _ttl else None


async def _modern_only(ctx, call_next):  # noqa: ANN001 - SDK middleware
    """H9_PY_MODERN_ONLY=1: refuse the legacy handshake, as a server that speaks only 2026-07-28."""
    if ctx.method == "initialize":
        raise MCPError(code=-32601, message="Method not found: this server speaks only 2026-07-28")
    return await call_next(ctx)


server = MCPServer(
    "h9-py-server",
    version="1.0.0",
    log_level="WARNING",
    cache_hints=_hints,
    middleware=[_modern_only] if os.environ.get("H9_PY_MODERN_ONLY") == "1" else None,
)


def tiny_png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """Build a valid, uncompressed-colour PNG of one solid colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    row = b"\x00" + bytes(rgb) * width  # filter byte 0 + pixels
    pixels = zlib.compress(row * height)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


class Weather(BaseModel):
    city: str
    temperature: float
    conditions: str


class Answer(BaseModel):
    answer: str


class Profile(BaseModel):
    """Every field has a default (SEP-1034)."""

    name: str = "Ann"
    age: int = 30
    subscribe: bool = True


@server.tool(description="Return the given text unchanged.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two integers (structured output).", structured_output=True)
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Current weather for a city (structured output).")
def weather(city: str) -> Weather:
    return Weather(city=city, temperature=21.5, conditions="sunny")


@server.tool(description="Return a tiny 2x2 red PNG image.")
def image() -> Image:
    return Image(data=tiny_png(), format="png")


@server.tool(description="Count to N, reporting progress each step (0.05 s per step).")
async def slow_count(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await anyio.sleep(0.05)
        await ctx.report_progress(i, steps, f"step {i}/{steps}")
    return f"counted {steps}"


@server.tool(
    description=(
        "Always fails. kind 'crash' (default) raises a plain exception, so the client "
        "gets isError with a generic text; 'tool_error' raises ToolError, whose message "
        "reaches the client; 'protocol_error' answers with a JSON-RPC error instead."
    )
)
def boom(kind: Literal["crash", "tool_error", "protocol_error"] = "crash") -> str:
    if kind == "tool_error":
        raise ToolError("boom: this tool always fails")
    if kind == "protocol_error":
        raise MCPError(-32000, "boom: protocol error")
    raise RuntimeError("boom: this tool always fails")


@server.tool(description="Send an info log message to the client, then return 'done'.")
async def notify_and_ask(ctx: Context) -> str:
    await ctx.info("notify_and_ask: hello from the python server")
    return "done"


@server.tool(
    description=(
        "Make a server-to-client request (kind 'elicit' = elicitation/create, "
        "'profile' = elicitation/create of a form whose fields all have defaults, "
        "'sample' = sampling/createMessage, 'sample_tools' = the same with a system "
        "prompt, model preferences, temperature, stop sequences and a tool the model "
        "must call) and return what the client answered or the error text it got."
    )
)
async def ask_client(
    ctx: Context, kind: Literal["elicit", "profile", "sample", "sample_tools"] = "elicit"
) -> str:
    try:
        if kind == "sample_tools":
            from mcp_types import ModelHint, ModelPreferences, SamplingMessage, TextContent, Tool, ToolChoice

            result = await ctx.session.create_message(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Weather in Paris?"))],
                max_tokens=64,
                system_prompt="Use the weather tool.",
                temperature=0.3,
                stop_sequences=["STOP"],
                model_preferences=ModelPreferences(hints=[ModelHint(name="opus")], intelligence_priority=0.9),
                tools=[
                    Tool(
                        name="weather",
                        description="Weather for a city",
                        input_schema={"type": "object", "properties": {"city": {"type": "string"}}},
                    )
                ],
                tool_choice=ToolChoice(mode="required"),
                related_request_id=ctx.request_id,
            )
            return f"sampled: {result.model_dump_json(by_alias=True, exclude_none=True)}"
        if kind == "sample":
            from mcp_types import SamplingMessage, TextContent

            result = await ctx.session.create_message(
                messages=[SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))],
                max_tokens=16,
                related_request_id=ctx.request_id,
            )
            return f"sampled: {result.model_dump_json(by_alias=True, exclude_none=True)}"
        if kind == "profile":
            profile = await ctx.elicit("Your profile?", Profile)
            if profile.action == "accept":
                return f"accept: {profile.data.model_dump_json()}"
            return profile.action
        outcome = await ctx.elicit("What is the answer?", Answer)
        return f"elicited: {outcome.action}"
    except Exception as exc:  # noqa: BLE001 - the error text is the point
        return f"error: {exc}"


def _ask_answer() -> Elicit[Answer]:
    return Elicit("What is the answer?", Answer)


def _ask_model() -> Sample:
    from mcp_types import SamplingMessage, TextContent

    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text="Say hi"))], max_tokens=16)


def _ask_roots() -> ListRoots:
    return ListRoots()


@server.tool(
    description=(
        "Ask the client three things in one go (a form, its model and its roots) through "
        "resolvers: server-to-client requests in the legacy era, one input_required "
        "round in the modern era. Returns what it got."
    )
)
def resolve_ask(
    answer: Annotated[ElicitationResult[Answer], Resolve(_ask_answer)],
    sampled: Annotated[CreateMessageResult, Resolve(_ask_model)],
    roots: Annotated[ListRootsResult, Resolve(_ask_roots)],
) -> str:
    said = sampled.content.text if sampled.content.type == "text" else sampled.content.type
    got = answer.data.answer if answer.action == "accept" else answer.action
    return f"answer={got}; model={said}; roots={[str(r.uri) for r in roots.roots]}"


def _ask_city() -> Elicit[Answer]:
    return Elicit("Which city?", Answer)


def _ask_unit(city: Annotated[Answer, Resolve(_ask_city)]) -> Elicit[Answer]:
    return Elicit(f"Which unit for {city.answer}?", Answer)


@server.tool(description="Ask for a city, then (a second round) for a unit; return both.")
def resolve_twice(
    city: Annotated[Answer, Resolve(_ask_city)],
    unit: Annotated[Answer, Resolve(_ask_unit)],
) -> str:
    return f"{city.answer} in {unit.answer}"


class City(BaseModel):
    name: str
    country: str = "NO"


@server.tool(description="Plan a trip (nested models: the schema has $defs and $ref).")
def plan(origin: City, destination: City) -> str:
    return f"{origin.name} ({origin.country}) to {destination.name} ({destination.country})"


@server.tool(description="Add a tool named grown and tell listening clients the tool list changed.")
async def grow(ctx: Context) -> str:
    if "grown" not in {t.name for t in await server.list_tools()}:
        server.add_tool(lambda: "grown", name="grown", description="Added by grow.")
    await ctx.notify_tools_changed()
    return "grown"


@server.tool(description="Tell clients following the resource at uri that it changed.")
async def touch(uri: str, ctx: Context) -> str:
    await ctx.notify_resource_updated(uri)
    return f"touched {uri}"


@server.resource("h9://readme", name="readme", title="Read me", mime_type="text/plain")
def readme() -> str:
    return "harness9 python test server"


@server.resource("h9://pixel.png", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return tiny_png()


@server.resource("h9://notes/{name}", name="note", mime_type="text/plain")
def note(name: str) -> str:
    return f"note {name}"


@server.prompt(title="Code review", description="Review a piece of code.")
def review(code: str, focus: str = "correctness") -> str:
    return f"Review this code for {focus}:\n{code}"


FOCI = ["correctness", "security", "speed", "style"]


@server.completion()
async def complete(ref, argument, context):  # noqa: ANN001 - SDK callback
    from mcp_types import Completion

    if argument.name == "focus":
        return Completion(values=[f for f in FOCI if f.startswith(argument.value)])
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", nargs="?", default="stdio", choices=["stdio", "streamable-http", "sse"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.transport == "stdio":
        server.run("stdio")
    else:
        server.run(args.transport, host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    sys.exit(main())
