"""Everything castregin shows people: numbers, tables in every format, the HTML report, plots."""
