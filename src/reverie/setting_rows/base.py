"""One row of the settings table."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..records import Record


class Setting(Record):
    """One row of the settings table: name, default, help, type and bounds."""

    __slots__ = ("choices", "default", "help", "maximum", "minimum", "name", "type")

    def __init__(
        self,
        name: str,
        default: Any,
        help: str,
        type: type = str,
        choices: tuple[str, ...] | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        self.name, self.default, self.help, self.type = name, default, help, type
        self.choices, self.minimum, self.maximum = choices, minimum, maximum

    @property
    def env(self) -> str:
        return "REVERIE_" + self.name.upper()

    def coerce(self, raw: Any, where: str) -> Any:
        try:
            if self.type is bool:
                if isinstance(raw, bool):
                    value: Any = raw
                elif str(raw).strip().lower() in ("1", "true", "yes", "on"):
                    value = True
                elif str(raw).strip().lower() in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError(raw)
            elif self.type is int:
                if isinstance(raw, bool):
                    raise ValueError(raw)
                value = int(raw)
            elif self.type is float:
                value = float(raw)
            else:
                value = str(raw)
        except (TypeError, ValueError):
            raise ConfigError(
                f"{where}: {self.name} must be {self.type.__name__}, got {raw!r}"
            ) from None
        if self.choices is not None and value not in self.choices:
            raise ConfigError(f"{where}: {self.name} must be one of {', '.join(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ConfigError(f"{where}: {self.name} must be >= {self.minimum}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise ConfigError(f"{where}: {self.name} must be <= {self.maximum}, got {value}")
        return value


__all__ = ["Setting"]
