from calc import add

assert add(2, 3) == 5, "add(2, 3) should be 5"
print("ok")
