"""Helpers of tests/test_abuse.py: the server variants, a server process
with its descriptor and memory readings, and the abuse cases."""
