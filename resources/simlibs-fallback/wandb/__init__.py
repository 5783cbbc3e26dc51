"""Stand-in wandb (ForgeEnv fallback): offline no-op runs."""
__version__ = "0.16.0"
run = None
config = {}


class _Run:
    def __init__(self, project=None, name=None, config=None):
        self.project, self.name, self.config = project, name, dict(config or {})

    def log(self, data, step=None, commit=None):
        pass

    def finish(self, exit_code=None):
        pass


def init(project=None, entity=None, name=None, config=None, **kwargs):
    global run
    run = _Run(project, name, config)
    return run


def log(data, step=None, commit=None, **kwargs):
    pass


def finish(exit_code=None, quiet=None):
    pass


def login(key=None, relogin=None, **kwargs):
    return True


def watch(models, criterion=None, log="gradients", log_freq=1000, **kwargs):
    pass


class Table:
    def __init__(self, columns=None, data=None, **kwargs):
        self.columns, self.data = columns, list(data or [])

    def add_data(self, *row):
        self.data.append(list(row))
