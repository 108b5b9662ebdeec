from titles.anchor import anchor


def test_simple():
    assert anchor("Hello World") == "#hello-world"


def test_punctuation():
    assert anchor("What's new?") == "#what-s-new"
