"""Stretches of body that meet and carry the same lines are one body (``sections._rejoined``)."""

from core.digitize.page.sections import _rejoined

MAIN = [0.5, 26.0, 51.5, 65.0, 78.0, 91.0, 104.0, 117.0, 130.0, 144.0, 157.0, 170.0, 184.0, 327.0, 340.0, 353.0]
SUMMARY = [0.5, 52.0, 104.0, 156.0, 208.0, 262.0, 314.0, 366.0]


def _lines(layout: dict):
    """A ``lines_of`` that reads the lines of the stretch [a, b) from the layout printed over it (the narrowest
    one its middle lies in), as the grid reading would."""
    def lines_of(a: int, b: int) -> list[float]:
        mid = (a + b) / 2
        return min(((hi - lo, lines) for (lo, hi), lines in layout.items() if lo <= mid < hi),
                   key=lambda x: x[0])[1]
    return lines_of


def test_pieces_of_one_log_that_meet_are_joined_and_other_layouts_beside_them_are_not():
    """A 1-bit main log found as pieces (the first round's and the later rounds' between them, 6 px apart) comes
    back as one body; the summary log that follows it and a stretch a gap away stay apart."""
    layout = {(0, 900): [0.5, 432.0], (3000, 16000): MAIN, (16000, 20000): SUMMARY, (20000, 30000): MAIN}
    found = [((100, 870), True), ((3331, 7196), True), ((7202, 8793), False), ((8799, 10804), True),
             ((10810, 16066), False), ((16072, 19000), True), ((21000, 29000), False)]
    assert _rejoined(found, _lines(layout)) == [
        ((100, 870), True), ((3331, 16066), False), ((16072, 19000), True), ((21000, 29000), False)]
    # a border or two read in one piece and not the other (a 1-bit cut breaks them in places) still joins; a
    # third of the lines apart does not
    moved = {**layout, (7202, 8793): MAIN[:-1] + [446.0]}
    assert _rejoined(found[1:3], _lines(moved)) == [((3331, 8793), False)]
    apart = {**layout, (7202, 8793): MAIN[:10] + [500.0, 520.0, 540.0, 560.0, 580.0, 600.0]}
    assert _rejoined(found[1:3], _lines(apart)) == found[1:3]
    # two stretches the later rounds found, each to be checked for a header's or a tail's ruled table, stay apart
    # however alike (a tail's calibration tables, ruled alike, 22 px apart)
    tables = [((12616, 13497), True), ((13519, 14265), True)]
    assert _rejoined(tables, _lines({(12000, 15000): MAIN})) == tables
