from slugkit import slugify


def anchor(title):
    """The link anchor of a section title: '#' and the title's slug."""
    return "#" + slugify(title)[:-1]
