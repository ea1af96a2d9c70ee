"""Scheduled tool runs: the engine that fires them (docket, on the deployment's Redis or in-process) and the run of
one tick through the front door."""
