"""What the machine has: CPU, RAM (capped by containers), GPUs and their free memory, and notes about them."""
