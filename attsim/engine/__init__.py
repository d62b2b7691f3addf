"""The engine: the mission (its SimPy loop), the plant, and the compiled mission loop."""
