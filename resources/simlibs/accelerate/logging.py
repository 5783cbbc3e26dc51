"""accelerate.logging: a logger adapter that understands `main_process_only=` / `in_order=`."""
import logging
import os


class MultiProcessAdapter(logging.LoggerAdapter):
    def log(self, level, msg, *args, **kwargs):
        kwargs.pop("main_process_only", None)
        kwargs.pop("in_order", None)
        kwargs.setdefault("stacklevel", 2)
        if self.isEnabledFor(level):
            msg, kwargs = self.process(msg, kwargs)
            self.logger.log(level, msg, *args, **kwargs)

    def warning_once(self, *args, **kwargs):
        self.warning(*args, **kwargs)


def get_logger(name, log_level=None):
    if log_level is None:
        log_level = os.environ.get("ACCELERATE_LOG_LEVEL", None)
    logger = logging.getLogger(name)
    if log_level is not None:
        logger.setLevel(log_level.upper())
        logger.root.setLevel(log_level.upper())
    return MultiProcessAdapter(logger, {})
