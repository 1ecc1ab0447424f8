"""Every exception logtrap raises is a LogtrapError; the CLI turns them into one `Error:` line."""

from __future__ import annotations


class LogtrapError(Exception):
    """Base class. `hint` is a short suggestion the CLI prints after the message."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class InputError(LogtrapError):
    """A path that does not exist, cannot be read, or a compressed file that is corrupt."""


class FormatError(LogtrapError):
    """A log format string that does not compile, or a file that is not in the chosen format."""


class ConfigError(LogtrapError):
    """A bad setting, flag value or config file."""


class StateError(LogtrapError):
    """A cron state file that is corrupt, foreign or from an incompatible version."""


class OutputError(LogtrapError):
    """An output file that exists and may not be overwritten, or cannot be written."""


class RejectedLinesWarning(UserWarning):
    """Lines `read_logs` could not parse: not in its frame, so it says so (a warning, since a
    line alone is never fatal). `scan_logs(...).stats` holds the counts and examples."""
