"""Store: the raw data of a campaign (written once, never replaced), its checksum manifest and imports.
"""
