"""Training: data, losses, memory budget, the trainer, distributed runs, adaptation."""
