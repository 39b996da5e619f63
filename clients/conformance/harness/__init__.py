"""The conformance harness: real servers, faults, a driver per client."""
