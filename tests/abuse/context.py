"""What every abuse case is given: the suite's settings and the server variant it runs against."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .server import Server
from .variants import Variant


@dataclass(frozen=True)
class Settings:
    header_timeout_s: int = 2
    idle_timeout_s: int = 3
    slowloris_connections: int = 1000
    rss_growth_bound_kb: int = 32 * 1024  # per case, over the level after the warm-up request
    fd_settle_s: float = 10.0  # how long closed connections may take to be released
    served_promptly_s: float = 1.5  # "served at once" on a machine busy with other variants
    timing_slack_s: float = 1.5  # lateness allowed for a timeout firing
    early_slack_s: float = 0.3  # earliness allowed (idle deadlines may fire a slack early)
    owed_rss_bound_kb: int = 16 * 1024  # growth while 80 MiB of responses are owed to a client that does not read


@dataclass
class Context:
    server: Server
    variant: Variant
    settings: Settings
    build_dir: Path
    details: dict = field(default_factory=dict)

    @property
    def port(self) -> int:
        return self.server.port
