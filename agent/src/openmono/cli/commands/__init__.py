"""The click subcommands of `openmono`, one family per module; `_main` registers them."""
