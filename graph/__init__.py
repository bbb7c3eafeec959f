"""Looking at graphs: drawing, querying and summarizing models."""
