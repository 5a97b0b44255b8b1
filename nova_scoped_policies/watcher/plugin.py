"""What every Watcher plugin of ours answers the same way."""


class Named:
    """The names Watcher asks a goal or a strategy for: ``NAME`` (the
    entry point's name) and ``DISPLAY_NAME`` (shown, and the translation
    key of other services)."""

    NAME = ''
    DISPLAY_NAME = ''

    @classmethod
    def get_name(cls) -> str:
        return cls.NAME

    @classmethod
    def get_display_name(cls) -> str:
        return cls.DISPLAY_NAME

    @classmethod
    def get_translatable_display_name(cls) -> str:
        return cls.DISPLAY_NAME
