"""Measure: run a campaign. Pinning, launching and stopping servers and load generators, the runner,
provenance, adaptive repetition and the study drivers (bench, echo, latency).
"""
