"""What the benches share (a soak driven as its own process, the chaos bench's faults and
account); none of these is a bench, so none prints a result line."""
