"""The native stack: the gateway and its services run as local processes (`openmono up|down|status`)."""
