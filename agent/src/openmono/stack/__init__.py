"""The native stack: the gateway and its services as local processes (`openmono up|down|status`)."""
