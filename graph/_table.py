"""Plain aligned columns, for print_tabular and profile."""


def format_table(headers, rows, right=()):
    """Lines of a table: the headers, a dashed rule, then one line per row.

    Args:
        headers: the column titles.
        rows: lists of cell texts, one per column.
        right: the indices of right-aligned (numeric) columns.
    """
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]

    def line(cells):
        padded = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(cells, widths))]
        return "  ".join(padded).rstrip()

    return [line(headers), "  ".join("-" * w for w in widths)] + [line(row) for row in rows]
