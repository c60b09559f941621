"""Recognises sanitizer reports in a process's stderr (standard library only).

The sanitizer builds (make test-sanitize) run the same conformance scripts with
ASAN_OPTIONS / UBSAN_OPTIONS / TSAN_OPTIONS that halt on the first report and
exit non-zero. A server that reports and exits is caught by its exit status;
this also catches a report from a process whose exit status nobody checks
(a server killed at the end of a case, a prefork worker, a client) and says
what the report was.
"""
from __future__ import annotations

import re

# The first line of every report kind we build with (ASan, LSan, UBSan, TSan).
_MARKERS = re.compile(
    r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: |"
    r"runtime error: |UndefinedBehaviorSanitizer|SUMMARY: (Address|Thread|UndefinedBehavior|Leak)Sanitizer")


def sanitizer_report(stderr: str | bytes | None, context_lines: int = 12) -> str | None:
    """The start of the first sanitizer report in stderr, or None if there is none."""
    if not stderr:
        return None
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _MARKERS.search(line):
            return "\n".join(lines[max(0, i - 1):i + context_lines])
    return None
