"""What the benches share: the result line and the clocks (result), a soak driven as its
own process (soak), the chaos bench's faults and account (chaos_env, chaos_judge). None
of these is a bench."""
