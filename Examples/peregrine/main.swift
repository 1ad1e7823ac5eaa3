print("peregrine: coming with issue 2")
