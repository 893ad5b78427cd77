"""A stand-in for a browser, for tests: `$BROWSER` set to this script makes harness9 hand
it the authorization URL; it GETs the URL and follows every redirect (the authorization
server approves at once and redirects to harness9's loopback listener), then exits.

    python follow-redirects.py URL

With FOLLOW_REDIRECTS_LOG set, appends the final status (never a URL: they carry codes).
"""

import os
import sys
import urllib.request


def main() -> int:
    url = sys.argv[-1]
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            outcome = f"status {answer.status}"
    except Exception as e:  # noqa: BLE001 - reported, not raised
        outcome = f"error {type(e).__name__}"
    log = os.environ.get("FOLLOW_REDIRECTS_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(outcome + "\n")
    return 0 if outcome.startswith("status") else 1


if __name__ == "__main__":
    sys.exit(main())
