"""Queue placement: the rules that pick an application's queue, and the queue tree they grow."""
