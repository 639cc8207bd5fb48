"""Item semantics: what an item *means* to everything that reads it, stated once.

The bottom of :mod:`builders` (it imports :mod:`sources` and nothing else of the builders), read by the items
themselves, the quality report, the lint (its text-only LLM too), the card, the review rooms, the harness exports
and the scorers:

* :mod:`.format`: the answer format (``option``, ``yes_no``, ``open``), closed or open, multiple choice, the
  closed choices and the gold among them, the option letters;
* :mod:`.options`: the fixed options ("None of the above", "I don't know", a refusal) and the blind guesses over
  option texts (always "A", the longest option);
* :mod:`.prompt`: the text a model is shown for an item, and the instruction that asks for its answer;
* :mod:`.extract`: a model's free-form output read as an option letter, "yes"/"no", a refusal or *unparsed*.
"""
