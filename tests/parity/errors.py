"""What the parity tests compare about errors: the exception a call raises in
nodeweave and in Keras, its type and Keras' key phrase."""


def raised(call):
    """The exception ``call()`` raises; an AssertionError when it raises none."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the type is what the tests compare
        return error
    raise AssertionError("no exception raised")


def same_error(ours, theirs, phrase):
    """Both calls raise the same exception type, and ours keeps Keras' key phrase; returns ours."""
    our_error, their_error = raised(ours), raised(theirs)
    assert type(our_error) is type(their_error), (our_error, their_error)
    assert phrase in str(their_error) and phrase in str(our_error), (str(our_error), str(their_error))
    return our_error
