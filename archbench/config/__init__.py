"""Configure: what a campaign runs.

Parameters and their validation, profiles, the server and load-generator registries, and the plan
(configurations, trial ids, execution order). The lowest stage: it imports no other archbench stage.
"""
