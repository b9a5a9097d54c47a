"""Consolidation: tidying a memory folder over months without losing a fact.

- ``plan``: the plan format (``Plan``, ``Operation``) any planner writes.
"""
