"""Test support: real processes on free loopback ports, waited on by polling (never fixed sleeps)."""
