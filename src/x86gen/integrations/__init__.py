"""Integrations of x86gen into other projects' compiler backends (each imported on its own, on first use):

- `x86gen.integrations.tinygrad`: tinygrad 0.14.0's ``DEV=CPU:X86`` backend with every instruction encoded by x86gen.
"""
