"""The exporter's clean-up pass: transposes between channels-last and channels-first cancelled or moved."""


def clean_transposes(nodes, keep):
    """Removes, in place, the Transpose pairs of ``nodes`` that compose to the identity."""
    producer = {output: node for node in nodes for output in node.outputs}
    renamed = {}
    for node in nodes:
        node.inputs = [renamed.get(name, name) for name in node.inputs]
        if node.op_type != "Transpose":
            continue
        before = producer.get(node.inputs[0])
        if before is not None and before.op_type == "Transpose" and node.outputs[0] not in keep and \
                [before.attributes["perm"][axis] for axis in node.attributes["perm"]] == sorted(node.attributes["perm"]):
            renamed[node.outputs[0]] = before.inputs[0]
    nodes[:] = [node for node in nodes if node.outputs[0] not in renamed]
    _drop_unused(nodes, keep)


def _drop_unused(nodes, keep):
    used = set(keep)
    kept = []
    for node in reversed(nodes):
        if any(output in used for output in node.outputs):
            used.update(node.inputs)
            kept.append(node)
    nodes[:] = kept[::-1]
