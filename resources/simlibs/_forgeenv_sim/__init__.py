"""Shared helpers of ForgeEnv's simulated libraries (not a real package; never imported by task scripts)."""
