"""A memory folder kept in git: the merge driver, ``install git`` and ``sync`` (uses
``history``, ``writes``, ``store`` and below).
"""
