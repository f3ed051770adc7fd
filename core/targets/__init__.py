"""Targets: log densities the samplers draw from, built in or loaded from a user file."""
