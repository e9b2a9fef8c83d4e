"""Live views of a running evaluation: the notebook widget and the terminal line."""
