import pytest

from foolgame.pages.sentences import split_sentences


@pytest.mark.parametrize(
    "paragraph, sentences",
    [
        ("One. Two.", ["One.", "Two."]),
        ("It rained. Then it stopped!  Did it? Yes.", ["It rained.", "Then it stopped!", "Did it?", "Yes."]),
        ("J. K. Rowling wrote it. It sold well.", ["J. K. Rowling wrote it.", "It sold well."]),
        ("Dr. Who met Mr. Smith in the U.S. Army. Later he left.", ["Dr. Who met Mr. Smith in the U.S. Army.", "Later he left."]),
        ('He said "Go home." Then he left.', ['He said "Go home."', "Then he left."]),
        ("It weighs 3.5 kg. It is red.", ["It weighs 3.5 kg.", "It is red."]),
        ("Born in 1950. In 1970 he moved.", ["Born in 1950.", "In 1970 he moved."]),
        ("no capital after stop. still one", ["no capital after stop. still one"]),
        ("Ünïcödé text here. Ökonomie folgt.", ["Ünïcödé text here.", "Ökonomie folgt."]),
        ("   ", []),
    ],
)
def test_split_sentences(paragraph: str, sentences: list[str]) -> None:
    assert split_sentences(paragraph) == sentences
