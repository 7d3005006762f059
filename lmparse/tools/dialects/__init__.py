"""Tool dialects, one small module per wire syntax.

A dialect module declares its markers, its hooks and its renderer; which families write it,
and the registry names it answers to, are declared by the family modules under
``lmparse.families``, which import the dialects they use.
"""
