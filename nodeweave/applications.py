"""``keras.applications``: the architectures' builders, without downloaded weights."""
