"""`python -m openmono.cli` = the `openmono` command."""

from openmono.cli import main

main()
