"""Checks a plan picture's layout: prints whether every rectangle lies inside
the picture, and on how many lines the weights section draws its squares."""
import re
import sys

text = open(sys.argv[1]).read()
width, height = map(int, re.search(r"<svg [^>]*width='(\d+)' height='(\d+)'",
                                   text).groups())
inside = True
for x, y, w, h in re.findall(
        r"<rect x='([\d.]+)' y='([\d.]+)' width='([\d.]+)' height='([\d.]+)'",
        text):
    if float(x) + float(w) > width or float(y) + float(h) > height:
        inside = False
print("inside:", "yes" if inside else "no")
start = text.index("weights (")
end = text.index("activations (")
tops = set()
for y, h in re.findall(r"<rect x='[\d.]+' y='([\d.]+)' width='[\d.]+' "
                       r"height='([\d.]+)' fill='hsl", text[start:end]):
    tops.add(round(float(y) // 100))
print("weight lines:", len(tops))
