// OK
