"""Test support: real processes on free loopback ports, waited on by polling (no fixed sleeps)."""
