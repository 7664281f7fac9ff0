"""Fact, preference or chatter: the learned durable-line classifier (issue 39) that
dreaming uses to judge what is worth keeping and search uses to tell a statement of
fact from talk around it (issue 37). :mod:`.model` is the pure scorer, :mod:`.weights`
reads the weights and labelled examples shipped beside it."""
