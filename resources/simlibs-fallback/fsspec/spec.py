class AbstractFileSystem:
    protocol = "abstract"

    def __init__(self, *args, **storage_options):
        self.storage_options = dict(storage_options)
