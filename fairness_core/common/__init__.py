"""The ground floor: what every other floor uses and that uses nothing of the library.

``vocabulary`` (the one spelling of every option: alpha, adjustments, the outcome's direction, the reference),
``validation`` (limits and the messages that name the row and column), ``text`` (escaping for markdown, Plotly,
HTML and terminals) and ``progress`` (the records a long computation reports and the job's estimate).
"""
