"""From traces to what is written: values and confidences on the LAS depth grid, the result, the LAS file, the QC picture, the scores against a truth."""
