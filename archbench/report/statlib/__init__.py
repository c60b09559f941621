"""The statistics several studies and the pipeline use: the comparison families and their tests, which trials the
load generator bounded, the adaptive repetition's outcome and the differences detectable with the trials at hand.
Below the studies: a study imports these, never another study's statistics."""
