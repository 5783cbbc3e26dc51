"""Stand-in Pillow (ForgeEnv fallback, used only when Pillow is not installed): the simulated lazy
images of _forgeenv_sim.imaging behind PIL's module layout."""
__version__ = "10.4.0"
